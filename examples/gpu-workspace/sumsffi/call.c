/* Calls the sumsffi cdylib from C: sums_mix over 1..=1000 with k = 3, m = 2,
   compared with the same sum computed here (each element adds k * m). */
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

int32_t sums_mix(const int32_t *data, size_t len, int32_t k, uint8_t m, int32_t *out);

int main(void) {
  int32_t data[1000];
  int64_t want = 0;
  for (int i = 0; i < 1000; ++i) { data[i] = i + 1; want += i + 1 + 3 * 2; }
  int32_t got = 0;
  if (sums_mix(data, 1000, 3, 2, &got) != 0) return 1;
  printf("sums_mix: gpu %d, expected %lld: %s\n", got, (long long)want, got == want ? "ok" : "MISMATCH");
  return got == want ? 0 : 1;
}
