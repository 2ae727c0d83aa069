/*
 * JNI glue for ISA-L's Reed-Solomon kernels. Cairn computes the coding (or decoding) matrix in Java
 * (jerasure's Vandermonde matrix is the on-disk format) and ISA-L expands it into its tables once;
 * ec_encode_data then multiplies the matrix by the input cells. Buffers are direct; nothing is copied.
 */
#include <isa-l/erasure_code.h>
#include "cairn_ec_common.h"

JNIEXPORT void JNICALL Java_dev_cairn_core_ec_jni_IsalEngine_initTables(
        JNIEnv *env, jclass cls, jint k, jint rows, jbyteArray matrix, jobject tables) {
    unsigned char a[CAIRN_MAX_PARTS * CAIRN_MAX_PARTS];
    (*env)->GetByteArrayRegion(env, matrix, 0, k * rows, (jbyte *) a);
    ec_init_tables(k, rows, a, (unsigned char *) (*env)->GetDirectBufferAddress(env, tables));
}

JNIEXPORT jint JNICALL Java_dev_cairn_core_ec_jni_IsalEngine_apply(
        JNIEnv *env, jclass cls, jint len, jint k, jint rows, jobject tables,
        jobjectArray in, jintArray inPos, jobjectArray out, jintArray outPos) {
    unsigned char *src[CAIRN_MAX_PARTS], *dst[CAIRN_MAX_PARTS];
    if (cairn_addresses(env, in, inPos, k, src) || cairn_addresses(env, out, outPos, rows, dst)) return -1;
    ec_encode_data(len, k, rows, (unsigned char *) (*env)->GetDirectBufferAddress(env, tables), src, dst);
    return 0;
}

/* Benchmark support: the same ec_encode_data call repeated in C, timed in C (nanoseconds), so the JNI
   overhead is measured against the library in one process, interleaved with the JNI loop. */
#include <time.h>
JNIEXPORT jlong JNICALL Java_dev_cairn_core_ec_jni_IsalEngine_nativeLoop(
        JNIEnv *env, jclass cls, jint len, jint k, jint rows, jobject tables,
        jobjectArray in, jintArray inPos, jobjectArray out, jintArray outPos, jint iterations) {
    unsigned char *src[CAIRN_MAX_PARTS], *dst[CAIRN_MAX_PARTS];
    if (cairn_addresses(env, in, inPos, k, src) || cairn_addresses(env, out, outPos, rows, dst)) return -1;
    unsigned char *t = (unsigned char *) (*env)->GetDirectBufferAddress(env, tables);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < iterations; i++) ec_encode_data(len, k, rows, t, src, dst);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (jlong) (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
}
