// Uses the installed Kiln package: one fused kernel, result checked.
#include <kiln/kiln.h>

#include <cstdio>

int main() {
  kiln::Float x = kiln::arange<kiln::Float>(1000);
  kiln::Float y = kiln::fma(x, x, 1.f);
  float total = kiln::sum(y).item();
  double expected = 0;
  for (int i = 0; i < 1000; ++i) expected += double(i) * i + 1;
  std::printf("consumer: sum = %.0f (expected %.0f)\n", total, expected);
  return std::abs(total - expected) / expected < 1e-5 ? 0 : 1;
}
