#include "bisca/client/types.h"

#include <algorithm>

#include <google/protobuf/util/message_differencer.h>

#include "bisca/client/log.h"

namespace bisca::client {
namespace {

bool same_action(const pb::GameAction& left, const pb::GameAction& right) {
  // Field by field, not by bytes: two encodings of one action compare equal.
  return google::protobuf::util::MessageDifferencer::Equals(left, right);
}

}  // namespace

std::vector<pb::GameAction> Request::remaining_actions() const {
  std::vector<pb::GameAction> remaining;
  for (const pb::GameAction& action : legal_actions()) {
    if (!was_rejected(action)) remaining.push_back(action);
  }
  return remaining;
}

bool Request::was_rejected(const pb::GameAction& action) const {
  return std::any_of(rejected.begin(), rejected.end(),
                     [&](const pb::GameAction& refused) { return same_action(refused, action); });
}

BotRejected::BotRejected(std::string code, std::string detail)
    : Failure("the server refused the bot: " + printable(code) + ": " + printable(detail)),
      code_(std::move(code)),
      detail_(std::move(detail)) {}

ConnectionLost::ConnectionLost(const std::string& message, int status_code)
    : Failure(message), status_code_(status_code) {}

pb::Game game_named(const std::string& name) {
  if (name == "belote") return pb::GAME_BELOTE;
  if (name == "bestia") return pb::GAME_BESTIA;
  throw std::invalid_argument("unknown game \"" + name + "\"; known: belote, bestia");
}

pb::Game game_of(const pb::GameObservation& observation) {
  switch (observation.game_case()) {
    case pb::GameObservation::kBelote: return pb::GAME_BELOTE;
    case pb::GameObservation::kBestia: return pb::GAME_BESTIA;
    case pb::GameObservation::GAME_NOT_SET: break;
  }
  return pb::GAME_UNSPECIFIED;
}

pb::Game game_of(const pb::GameAction& action) {
  switch (action.game_case()) {
    case pb::GameAction::kBelote:
      return action.belote().action_case() != pb::belote::Action::ACTION_NOT_SET ? pb::GAME_BELOTE
                                                                            : pb::GAME_UNSPECIFIED;
    case pb::GameAction::kBestia:
      return action.bestia().action_case() != pb::bestia::Action::ACTION_NOT_SET ? pb::GAME_BESTIA
                                                                            : pb::GAME_UNSPECIFIED;
    case pb::GameAction::GAME_NOT_SET: break;
  }
  return pb::GAME_UNSPECIFIED;
}

}  // namespace bisca::client
