// LoadedProgram::load: the orchestration and the child kernels of a ChipCallable.
#include "loaded_program.h"

#include <cstring>

#include "simpler/abi/status.h"
#include "simpler/kernel/kernel_abi.h"
#include "simpler/task/task_interface.h"

namespace simpler::rt {
namespace {

// Splits a signature into its tensor prefix and scalar suffix; false if a tensor follows
// a scalar or a value is not a ChipArgDirection.
bool split_signature(std::span<const uint8_t> sig, uint32_t* tensors, uint32_t* scalars) {
  uint32_t t = 0;
  uint32_t s = 0;
  for (uint8_t d : sig) {
    if (d > CHIP_ARG_INOUT) return false;
    if (d == CHIP_ARG_SCALAR) {
      ++s;
    } else {
      if (s != 0) return false;
      ++t;
    }
  }
  if (t > CHIP_MAX_TENSOR_ARGS || s > CHIP_MAX_SCALAR_ARGS) return false;
  *tensors = t;
  *scalars = s;
  return true;
}

bool same_bytes(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  return a.size() == b.size() &&
         (a.data() == b.data() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

}  // namespace

bool mode_fits(uint32_t mode, uint8_t direction) {
  switch (direction) {
    case CHIP_ARG_IN:
      return mode == SIMPLER_TENSOR_IN || mode == SIMPLER_TENSOR_NODEP;
    case CHIP_ARG_OUT:
      return mode != SIMPLER_TENSOR_IN;
    case CHIP_ARG_INOUT:
      return mode == SIMPLER_TENSOR_INOUT || mode == SIMPLER_TENSOR_NODEP;
    default:
      return false;
  }
}

void LoadedKernel::seal() {
  out_alloc = false;
  for (uint32_t i = 0; i < CHIP_MAX_TENSOR_ARGS; ++i) {
    uint8_t bits = 0;
    for (uint32_t mode = SIMPLER_TENSOR_IN; mode <= SIMPLER_TENSOR_NODEP; ++mode) {
      if (i < tensor_count && mode_fits(mode, directions[i])) bits |= 1u << mode;
    }
    modes[i] = bits;
    out_alloc = out_alloc || (bits & (1u << SIMPLER_TENSOR_OUT_ALLOC)) != 0;
  }
}

LoadedProgram::LoadedProgram(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LoadedProgram::~LoadedProgram() = default;

int LoadedProgram::load(const ChipCallableView& callable, std::unique_ptr<LoadedProgram>* out,
                        std::string* error) {
  std::string scratch;
  std::string& err = error != nullptr ? *error : scratch;
  if (out == nullptr) {
    err = "LoadedProgram::load: out is null";
    return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  }
  out->reset();
  auto impl = std::make_unique<Impl>();
  impl->func_name = std::string(callable.func_name);
  if (impl->func_name.empty()) {
    err = "the callable's func_name is empty (name the orchestration entry symbol)";
    return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  }
  impl->signature.assign(callable.signature.begin(), callable.signature.end());
  if (!split_signature(callable.signature, &impl->tensor_count, &impl->scalar_count)) {
    err = "the callable's signature is malformed (tensors must precede scalars, at most " +
          std::to_string(CHIP_MAX_TENSOR_ARGS) + " of each)";
    return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  }
  std::array<bool, CHIP_MAX_FUNC_ID + 1> seen{};
  for (const auto& child : callable.children) {
    if (child.func_id < 0 || child.func_id > CHIP_MAX_FUNC_ID || seen[child.func_id]) {
      err = "child func_id " + std::to_string(child.func_id) + " is out of range or duplicated";
      return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
    }
    seen[child.func_id] = true;
    LoadedKernel& k = impl->kernels[child.func_id];
    if (!split_signature(child.callable.signature, &k.tensor_count, &k.scalar_count)) {
      err = "child func_id " + std::to_string(child.func_id) +
            ": the kernel signature is malformed (tensors must precede scalars)";
      return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
    }
    std::memcpy(k.directions.data(), child.callable.signature.data(),
                child.callable.signature.size());
    k.dtypes.fill(LoadedKernel::kAnyDtype);
    const std::vector<ArgSpec> specs =
        arg_specs_of(child.callable.signature, child.callable.arg_types);
    for (size_t i = 0; i < specs.size() && i < k.dtypes.size(); ++i) {
      if (specs[i].dtype) k.dtypes[i] = static_cast<uint8_t>(*specs[i].dtype);
      k.ranks[i] = static_cast<uint8_t>(specs[i].rank);
    }
    if (child.callable.core_type) k.core_type = static_cast<int32_t>(*child.callable.core_type);
    k.seal();
  }

  std::string why;
  SharedObject orch;
  if (!SharedObject::load(callable.binary, &orch, &why)) {
    err = "the orchestration image could not be loaded: " + why;
    return SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED;
  }
  void* entry = orch.symbol(impl->func_name.c_str());
  if (entry == nullptr) {
    err = "the orchestration image does not export '" + impl->func_name +
          "' (declare it extern \"C\" and check the ChipCallable's func_name)";
    return SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED;
  }
  impl->orchestration = reinterpret_cast<simpler_orch_entry_fn>(entry);
  impl->objects.push_back(std::move(orch));

  // Children sharing one binary share one loaded object.
  std::vector<std::pair<std::span<const uint8_t>, simpler_kernel_entry_fn>> loaded;
  for (const auto& child : callable.children) {
    simpler_kernel_entry_fn fn = nullptr;
    for (const auto& [bytes, f] : loaded) {
      if (same_bytes(bytes, child.callable.binary)) fn = f;
    }
    if (fn == nullptr) {
      SharedObject kernel;
      if (!SharedObject::load(child.callable.binary, &kernel, &why)) {
        err = "the kernel image of func_id " + std::to_string(child.func_id) +
              " could not be loaded: " + why;
        return SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED;
      }
      void* sym = kernel.symbol(SIMPLER_KERNEL_ENTRY_SYMBOL);
      if (sym == nullptr) {
        err = "the kernel image of func_id " + std::to_string(child.func_id) +
              " does not export '" + SIMPLER_KERNEL_ENTRY_SYMBOL +
              "' (declare extern \"C\" void kernel_entry(int64_t*))";
        return SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED;
      }
      fn = reinterpret_cast<simpler_kernel_entry_fn>(sym);
      impl->objects.push_back(std::move(kernel));
      loaded.emplace_back(child.callable.binary, fn);
    }
    impl->kernels[child.func_id].entry = fn;
    impl->func_ids.push_back(child.func_id);
  }
  out->reset(new LoadedProgram(std::move(impl)));
  return SIMPLER_OK;
}

}  // namespace simpler::rt
