#include "master/store/store.h"
