// Kept so that code written against this path keeps building: the backend SDK is
// <collage/sdk/backend.h> now.
#pragma once

#include "collage/sdk/backend.h"
