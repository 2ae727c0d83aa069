/*
 * JNI glue for jerasure (over gf-complete). jerasure_matrix_encode multiplies a w=8 matrix by the input
 * cells. The Java side checks k, rows and the length (a multiple of 16 here; the tail is done in Java).
 * gf-complete aborts the process when the buffers' addresses disagree modulo 16, so that is checked here
 * and reported as an error instead.
 */
#include <jerasure.h>
#include <galois.h>
#include <stdint.h>
#include <time.h>
#include <stdlib.h>
#include <reed_sol.h>
#include "cairn_ec_common.h"

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
    /* jerasure builds its galois tables lazily and without locks: build them once, now */
    galois_init_default_field(8);
    return JNI_VERSION_1_8;
}

/* Resolves and checks the buffers and the matrix of one call: 0, -1 (not direct) or -2 (addresses
   disagree modulo 16, which would make gf-complete abort the process). */
static int cairn_jerasure_args(JNIEnv *env, jint k, jint rows, jintArray matrix, jobjectArray in, jintArray inPos,
                               jobjectArray out, jintArray outPos, unsigned char **src, unsigned char **dst, int *mat) {
    if (cairn_addresses(env, in, inPos, k, src) || cairn_addresses(env, out, outPos, rows, dst)) return -1;
    uintptr_t align = (uintptr_t) src[0] & 15;
    for (int i = 0; i < k; i++) if (((uintptr_t) src[i] & 15) != align) return -2;
    for (int i = 0; i < rows; i++) if (((uintptr_t) dst[i] & 15) != align) return -2;
    (*env)->GetIntArrayRegion(env, matrix, 0, k * rows, mat);
    return 0;
}

static void cairn_jerasure_encode(jint len, jint k, jint rows, int *mat, unsigned char **src, unsigned char **dst) {
#if defined(__x86_64__)
    /* Debian's gf-complete uses legacy SSE: after AVX-512 code (ISA-L) on this thread it runs 2x slower
       until the upper vector state is cleared */
    if (__builtin_cpu_supports("avx")) __asm__ volatile("vzeroupper");
#endif
    jerasure_matrix_encode(k, rows, 8, mat, (char **) src, (char **) dst, len);
}

JNIEXPORT jint JNICALL Java_dev_cairn_core_ec_jni_JerasureEngine_apply(
        JNIEnv *env, jclass cls, jint len, jint k, jint rows, jintArray matrix,
        jobjectArray in, jintArray inPos, jobjectArray out, jintArray outPos) {
    unsigned char *src[CAIRN_MAX_PARTS], *dst[CAIRN_MAX_PARTS];
    int mat[CAIRN_MAX_PARTS * CAIRN_MAX_PARTS];
    int rc = cairn_jerasure_args(env, k, rows, matrix, in, inPos, out, outPos, src, dst, mat);
    if (rc == 0) cairn_jerasure_encode(len, k, rows, mat, src, dst);
    return rc;
}

/* jerasure's own coding matrix, so tests can prove Cairn's Java construction is byte-for-byte the same */
JNIEXPORT jintArray JNICALL Java_dev_cairn_core_ec_jni_JerasureEngine_referenceMatrix(
        JNIEnv *env, jclass cls, jint k, jint m) {
    if (k < 1 || m < 1 || k + m > CAIRN_MAX_PARTS) return NULL;
    int *mat = reed_sol_vandermonde_coding_matrix(k, m, 8);
    if (mat == NULL) return NULL;
    jintArray out = (*env)->NewIntArray(env, k * m);
    if (out != NULL) (*env)->SetIntArrayRegion(env, out, 0, k * m, mat);
    free(mat);
    return out;
}

/* Benchmark support: jerasure_matrix_encode repeated in C and timed in C (see cairn_isal.c). */
JNIEXPORT jlong JNICALL Java_dev_cairn_core_ec_jni_JerasureEngine_nativeLoop(
        JNIEnv *env, jclass cls, jint len, jint k, jint rows, jintArray matrix,
        jobjectArray in, jintArray inPos, jobjectArray out, jintArray outPos, jint iterations) {
    unsigned char *src[CAIRN_MAX_PARTS], *dst[CAIRN_MAX_PARTS];
    int mat[CAIRN_MAX_PARTS * CAIRN_MAX_PARTS];
    int rc = cairn_jerasure_args(env, k, rows, matrix, in, inPos, out, outPos, src, dst, mat);
    if (rc != 0) return rc;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < iterations; i++) cairn_jerasure_encode(len, k, rows, mat, src, dst);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (jlong) (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
}
