#include "abi/callable.h"

#include <string>

#include "abi/abi_error.h"
#include "simpler/abi/status.h"

namespace simpler::rt::host {

ChipCallableView parse_callable(const void* image, size_t size) {
  ChipCallableView view;
  std::string error;
  if (!parse_chip_callable_image(image, size, &view, &error)) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "invalid ChipCallable image: " + error);
  }
  return view;
}

ResidentCallable make_resident(const uint8_t* bytes, size_t size,
                               const ResidentCallable* same_image) {
  ResidentCallable c;
  c.bytes = bytes;
  c.size = size;
  c.view = parse_callable(bytes, size);
  c.signature.reserve(c.view.signature.size());
  for (uint8_t d : c.view.signature) c.signature.push_back(static_cast<ArgDirection>(d));
  if (!c.view.arg_types.empty()) c.typed = arg_specs_of(c.view.signature, c.view.arg_types);
  if (same_image != nullptr && same_image->program) {
    c.program = same_image->program;
    return c;
  }
  std::string error;
  std::unique_ptr<LoadedProgram> program;
  int status = LoadedProgram::load(c.view, &program, &error);
  c.program = std::move(program);
  if (status != SIMPLER_OK) {
    fail(status,
         "loading the ChipCallable '" + std::string(c.view.func_name) + "' failed: " + error);
  }
  if (!c.program)
    fail(PTO_RUNTIME_ERR_INTERNAL, "LoadedProgram::load reported success without a program");
  return c;
}

}  // namespace simpler::rt::host
