// Kept so that code written against this path keeps building: the backend SDK is
// <collage/sdk/layout.h> now.
#pragma once

#include "collage/sdk/layout.h"
