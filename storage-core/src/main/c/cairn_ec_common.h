/* Shared helpers of Cairn's JNI erasure-coding glue. */
#ifndef CAIRN_EC_COMMON_H
#define CAIRN_EC_COMMON_H

#include <jni.h>

#define CAIRN_MAX_PARTS 32

/* Resolves n direct buffers plus their positions to addresses; returns 0, or -1 if one is not direct. */
static int cairn_addresses(JNIEnv *env, jobjectArray bufs, jintArray positions, int n, unsigned char **out) {
    jint pos[CAIRN_MAX_PARTS];
    if (n < 0 || n > CAIRN_MAX_PARTS) return -1;
    (*env)->GetIntArrayRegion(env, positions, 0, n, pos);
    for (int i = 0; i < n; i++) {
        jobject b = (*env)->GetObjectArrayElement(env, bufs, i);
        unsigned char *a = (unsigned char *) (*env)->GetDirectBufferAddress(env, b);
        (*env)->DeleteLocalRef(env, b);
        if (a == NULL) return -1;
        out[i] = a + pos[i];
    }
    return 0;
}

#endif
