/* Philox4x32-10 and the integer inverse-normal table (see philox.h). */
#include "core/philox.h"

#include <math.h>
#include <pthread.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void wt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)PHILOX_M0 * c0, p1 = (uint64_t)PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* Inverse normal CDF for p in (0, 0.5]: Acklam's rational approximation
 * (relative error 1.15e-9), refined by one Halley step on erfc. */
static double normal_quantile(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    double z;
    if (p < 0.02425) {
        double q = sqrt(-2 * log(p));
        z = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else {
        double q = p - 0.5, r = q * q;
        z = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    double e = 0.5 * erfc(-z / sqrt(2.0)) - p;
    double u = e * 2.5066282746310002 * exp(z * z / 2); /* sqrt(2 pi) */
    return z - u / (1 + z * u / 2);
}

static int32_t g_table[WT_NORMAL_TABLE_LEN];
static pthread_once_t g_table_once = PTHREAD_ONCE_INIT;

static int32_t knot(double x)
{
    return (int32_t)lrint(normal_quantile((x + 0.5) / 4294967296.0) * 2097152.0);
}

static void build_table(void)
{
    int i = 0;
    for (; i < 256; i++)
        g_table[i] = knot((double)i);
    for (int e = 8; e <= 30; e++)
        for (int j = 0; j < 256; j++)
            g_table[i++] = knot(ldexp(1.0, e) + (double)j * ldexp(1.0, e - 8));
    g_table[i] = knot(2147483648.0);
}

const int32_t *wt_normal_table(void)
{
    pthread_once(&g_table_once, build_table);
    return g_table;
}

float wt_normal_from_word(uint32_t u, const int32_t *t)
{
    const uint32_t x = (u >> 31) ? (~u & 0x7fffffffu) : (u & 0x7fffffffu);
    int32_t z;
    if (x < 256) {
        z = t[x];
    } else {
        const int e = 31 - __builtin_clz(x);
        const uint32_t rel = x - (1u << e), sh = (uint32_t)e - 8;
        const uint32_t j = rel >> sh, f = rel & ((1u << sh) - 1);
        const uint32_t f15 = sh >= 15 ? f >> (sh - 15) : f << (15 - sh);
        const uint32_t base = 256 + ((uint32_t)e - 8) * 256 + j;
        const uint32_t diff = (uint32_t)(t[base + 1] - t[base]);
        z = t[base] + (int32_t)((diff * f15) >> 15);
    }
    if (u >> 31) z = -z;
    return (float)z * (1.0f / 2097152.0f);
}
