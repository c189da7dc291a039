// See stand_in_channel.h.
#include "transports/tcp/stand_in_channel.h"

#include "base/error.h"

namespace weft {

weftResult_t StandInChannel::prepare() {
  Channel* ch = nullptr;
  WEFT_CHECK(target(true, &ch));
  return ch != nullptr ? ch->prepare() : weftSuccess;
}

weftResult_t StandInChannel::trySend(const void* d, size_t n, size_t* moved) {
  *moved = 0;
  Channel* ch = nullptr;
  WEFT_CHECK(target(true, &ch));
  return ch != nullptr ? ch->trySend(d, n, moved) : weftSuccess;
}

weftResult_t StandInChannel::trySendStable(const void* d, size_t n, size_t* moved) {
  *moved = 0;
  Channel* ch = nullptr;
  WEFT_CHECK(target(true, &ch));
  return ch != nullptr ? ch->trySendStable(d, n, moved) : weftSuccess;
}

weftResult_t StandInChannel::tryRecv(void* d, size_t n, size_t* moved) {
  *moved = 0;
  Channel* ch = nullptr;
  WEFT_CHECK(target(true, &ch));
  return ch != nullptr ? ch->tryRecv(d, n, moved) : weftSuccess;
}

weftResult_t StandInChannel::tryPeek(void* d, size_t n, size_t* got) {
  *got = 0;
  Channel* ch = nullptr;
  WEFT_CHECK(target(lookOpens(), &ch));
  return ch != nullptr ? ch->tryPeek(d, n, got) : weftSuccess;
}

ChannelWake StandInChannel::wake() const {
  Channel* ch = opened();
  return ch != nullptr ? ch->wake() : waitWake();
}

weftResult_t StandInChannel::checkPeer() const {
  Channel* ch = opened();
  return ch != nullptr ? ch->checkPeer() : weftSuccess;
}

}  // namespace weft
