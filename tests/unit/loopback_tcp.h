// Connected TCP pairs over 127.0.0.1 for the socket tests: real kernel
// sockets, so the tests see what weft's channels see.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

namespace weft {

// `n` connections through one listener: out[i] is the connecting end (with
// TCP_NODELAY, as weft sets it), in[i] the accepted one.
inline void connectLoopbackPairs(int n, std::vector<int>* out, std::vector<int>* in) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  EXPECT_EQ(bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  EXPECT_EQ(listen(ls, n), 0);
  getsockname(ls, reinterpret_cast<sockaddr*>(&a), &len);
  for (int i = 0; i < n; ++i) {
    int c = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(connect(c, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    int one = 1;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    out->push_back(c);
    in->push_back(accept(ls, nullptr, nullptr));
  }
  close(ls);
}

}  // namespace weft
