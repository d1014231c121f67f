// Programs through the Engine with correct numerics against host references.
#include <cmath>

#include "engine_test_support.h"

namespace simpler::rt::testing {
namespace {

using NumericsTest = EngineTest;

TEST_F(NumericsTest, VectorAdd16384) {
  constexpr size_t n = 16384;
  DeviceBuffer a(n * 4), b(n * 4), c(n * 4);
  const auto ha = iota_floats(n, 1.0f, 0.5f);
  const auto hb = iota_floats(n, -3.0f, 0.25f);
  a.upload(ha);
  b.upload(hb);
  auto program = load(test_programs::vector_add());
  auto engine = make_engine();
  std::string error;
  const auto args = make_args({a.tensor({n}), b.tensor({n}), c.tensor({n})});
  ASSERT_EQ(run(*engine, *program, args, &error), SIMPLER_OK) << error;
  const auto hc = c.download<float>();
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(hc[i], ha[i] + hb[i]) << "element " << i;
}

}  // namespace
}  // namespace simpler::rt::testing
