// The error-message check the renderer's tests share.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <initializer_list>
#include <string>

namespace kiln::render::test {

/// Expects `statement` to throw `Error` with a message that contains every one of
/// `needles`; returns the message.
template <typename Error, typename F>
std::string expect_error(F&& statement, std::initializer_list<std::string> needles) {
  try {
    statement();
  } catch (const Error& e) {
    std::string message = e.what();
    for (const std::string& needle : needles)
      EXPECT_NE(message.find(needle), std::string::npos) << "missing \"" << needle << "\" in: " << message;
    return message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no exception; expected one naming \"" << *needles.begin() << "\"";
  return "";
}

}  // namespace kiln::render::test
