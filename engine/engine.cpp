//===- engine.cpp - the inference engine ----------------------------------===//
#include "engine.h"
