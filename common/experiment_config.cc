// Implemented by its area.
