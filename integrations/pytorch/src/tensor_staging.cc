// See tensor_staging.h.
#include "tensor_staging.h"

#include <ATen/MemoryOverlap.h>
#include <c10/util/Exception.h>

namespace weft_torch {

void checkTensor(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.defined(), "weft: ", name, " is an undefined tensor");
  TORCH_CHECK(t.device().is_cpu(), "weft: ", name, " is on ", t.device(),
              "; this build of the weft backend takes CPU tensors only");
  TORCH_CHECK(t.layout() == at::kStrided, "weft: ", name, " must be a dense (strided) tensor");
}

void checkWritable(const at::Tensor& t, const char* name) {
  checkTensor(t, name);
  TORCH_CHECK(at::has_internal_overlap(t) != at::MemOverlap::Yes, "weft: ", name,
              " has elements that share memory (made by expand()?), so it cannot receive "
              "results; pass a tensor with memory of its own (.clone())");
}

void copyInto(const at::Tensor& dst, const at::Tensor& src) {
  at::NoGradGuard data;
  dst.copy_(src);
}

at::Tensor readable(const at::Tensor& t, const char* name, Submission& s) {
  checkTensor(t, name);
  if (t.is_contiguous()) return t;
  at::NoGradGuard data;  // the copy is data for weft, not a step of a graph
  at::Tensor copy = t.contiguous();
  s.keepAlive.push_back(copy);
  return copy;
}

at::Tensor writable(const at::Tensor& t, const char* name, bool inPlace, Submission& s) {
  checkWritable(t, name);
  if (t.is_contiguous()) return t;
  at::NoGradGuard data;
  at::Tensor standIn = inPlace ? t.contiguous() : at::empty(t.sizes(), t.options());
  s.copyBack.emplace_back(t, standIn);
  return standIn;
}

}  // namespace weft_torch
