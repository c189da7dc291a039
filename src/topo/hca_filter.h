// WEFT_IB_HCA: which RDMA NICs weft may use, in NCCL's NCCL_IB_HCA syntax.
//   "mlx5"            NICs whose name starts with mlx5
//   "=mlx5_0,mlx5_1"  exactly these names
//   "^mlx5_2"         every NIC but those that start with mlx5_2 ("^=" for exact)
//   "mlx5_0:1"        only port 1 of mlx5_0
// An empty filter lets every NIC through.
#pragma once

#include <string>
#include <vector>

namespace weft::topo {

class HcaFilter {
 public:
  HcaFilter() = default;
  explicit HcaFilter(const std::string& spec);

  // `ports` are the NIC's port numbers when known; a NIC whose ports are
  // unknown matches a `:port` entry (it cannot be told apart).
  bool allows(const std::string& name, const std::vector<int>& ports) const;
  bool empty() const { return entries_.empty(); }
  const std::string& spec() const { return spec_; }

 private:
  struct Entry {
    std::string name;
    int port = -1;  // -1: any port
  };
  std::string spec_;
  bool exclude_ = false;
  bool exact_ = false;
  std::vector<Entry> entries_;
};

}  // namespace weft::topo
