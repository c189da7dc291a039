// Votes of communicator-creating calls (see create_vote.h).
#include "core/create_vote.h"

#include <algorithm>
#include <cstring>

namespace weft {

CreateVote makeVote(CreateOp op, uint32_t seq, uint64_t digest) {
  CreateVote v;
  std::memset(&v, 0, sizeof(v));
  v.op = static_cast<uint32_t>(op);
  v.seq = seq;
  v.digest = digest;
  return v;
}

void refuseVote(CreateVote* vote, const std::string& why) {
  vote->refused = 1;
  copyText(vote->why, why);
}

const char* createOpName(uint32_t op) {
  switch (static_cast<CreateOp>(op)) {
    case CreateOp::kSplit:
      return "weftCommSplit";
    case CreateOp::kShrink:
      return "weftCommShrink";
    case CreateOp::kGrow:
      return "weftCommGrow";
  }
  return "an unknown call";
}

std::string voteProblem(const CreateVote& mine, const std::vector<CreateVote>& votes,
                        const std::vector<int>& ranks, const char* digestWhat) {
  for (size_t i = 0; i < votes.size(); ++i) {
    const CreateVote& v = votes[i];
    const std::string who = "rank " + std::to_string(ranks[i]);
    if (v.op != mine.op || v.seq != mine.seq)
      return who + " is in its communicator-creating call #" + std::to_string(v.seq) + " (" +
             createOpName(v.op) + ") while this rank is in #" + std::to_string(mine.seq) + " (" +
             createOpName(mine.op) +
             "): every rank must make the same such calls in the same order";
    if (v.refused) {
      std::string why(v.why, strnlen(v.why, sizeof(v.why)));
      return who + " refused its arguments (" + why + "), so no rank created a communicator";
    }
    if (v.digest != mine.digest)
      return who + " passed a different " + digestWhat + " than this rank";
  }
  return "";
}

}  // namespace weft
