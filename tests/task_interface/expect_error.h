// EXPECT_TASK_ERROR(statement, "field"): throws TaskInterfaceError whose message names the field.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "simpler/task/task_interface.h"

#define EXPECT_TASK_ERROR(statement, field)                                    \
  do {                                                                         \
    try {                                                                      \
      statement;                                                               \
      ADD_FAILURE() << #statement " did not throw";                            \
    } catch (const ::simpler::TaskInterfaceError& e) {                         \
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos)          \
          << "message '" << e.what() << "' does not name '" << (field) << "'"; \
    }                                                                          \
  } while (0)
