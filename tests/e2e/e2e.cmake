# tests of this area are added here with ring_add_test()
