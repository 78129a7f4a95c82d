// Bisca's C++ bot SDK: write a bot as one function from an action request to one of its legal
// actions, and run() does the connection, the hello, answering, retries after a rejection,
// reconnects, the deal check and logging.  See clients/cpp/README.md.
//
//   #include "bisca/client.h"
//   int main() {
//     bisca::client::Options options;
//     options.name = "first";
//     options.games = {bisca::v1::GAME_BELOTE, bisca::v1::GAME_BESTIA};
//     bisca::client::run([](const bisca::client::Request& request) {
//       return request.legal_actions()[0];  // the first legal action
//     }, options);
//   }
#pragma once

#include "bisca/client/deal_check.h"
#include "bisca/client/deal_rng.h"
#include "bisca/client/deal_start.h"
#include "bisca/client/log.h"
#include "bisca/client/rules.h"
#include "bisca/client/run.h"
#include "bisca/client/session.h"
#include "bisca/client/types.h"
