// Who is at the other end of a loopback connection. A job whose secret is
// derived from what anyone may know (a launch from the environment without
// WEFT_SECRET) is only run on loopback, and its listeners admit a connection
// only when the socket at the other end belongs to this process's effective
// user, as the kernel lists it in /proc/net/tcp and /proc/net/tcp6: another
// user on the host cannot join by computing the secret, and the network
// cannot reach it at all.
#pragma once

#include "bootstrap/socket.h"

namespace weft {

bool isLoopback(const SockAddr& a);

// True when the peer socket of the connected `fd` belongs to geteuid();
// false when it belongs to another user, is not on loopback, or is not found.
bool peerIsSameUser(int fd);

}  // namespace weft
