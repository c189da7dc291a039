// Agreement on which call creates a communicator. Split, shrink and any later
// call that creates a communicator first exchange one vote per participant:
// the call's name, this communicator's count of such calls, a digest of the
// arguments every participant must share, and the sentence of a rank that
// refused its own arguments. A refusing rank still votes, so the others fail
// at once with its sentence instead of waiting WEFT_TIMEOUT, and the count
// keeps any rank from pairing one call with another (a rank that refused
// call k and retries makes call k+1, as the others do).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft {

enum class CreateOp : uint32_t { kSplit = 1, kShrink = 2, kGrow = 3 };

// A wire record: fixed size, read only by ranks of the same build.
struct CreateVote {
  uint32_t op;      // CreateOp
  uint32_t seq;     // the communicator's count of create calls, this one included
  uint64_t digest;  // of the arguments all must share (0 where none must)
  int32_t refused;  // 1: `why` says which argument this rank refused
  char why[196];    // NUL-terminated
};
static_assert(sizeof(CreateVote) == 216, "CreateVote is a wire record");

CreateVote makeVote(CreateOp op, uint32_t seq, uint64_t digest);
// Copies `text` into a wire record's fixed field, cut to fit, NUL-terminated.
template <size_t N>
void copyText(char (&field)[N], const std::string& text) {
  const size_t n = text.size() < N - 1 ? text.size() : N - 1;
  text.copy(field, n);
  field[n] = '\0';
}

// Marks the vote refused with `why` (cut to fit).
void refuseVote(CreateVote* vote, const std::string& why);
const char* createOpName(uint32_t op);

// The first disagreement between `votes[i]`, cast by `ranks[i]`, and this
// rank's `mine`, as the sentence every participant reports; "" when all
// agree and none refused. `digestWhat` names what the digest covers.
std::string voteProblem(const CreateVote& mine, const std::vector<CreateVote>& votes,
                        const std::vector<int>& ranks, const char* digestWhat);

}  // namespace weft
