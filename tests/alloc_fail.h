/* tests/alloc_fail.h: failing the Nth host allocation made from inside libvkds
 * (tests/alloc_fail.cpp), for test_alloc_fail.c. */
#ifndef VKDS_TEST_ALLOC_FAIL_H
#define VKDS_TEST_ALLOC_FAIL_H
#include <stdbool.h>
#ifdef __cplusplus
extern "C" {
#endif
/* Whether libvkds.so is loaded where the counting can see it. */
bool alloc_fail_ready(void);
/* From now on counts libvkds's allocations from 0 and fails the one numbered n (n < 0:
 * none). */
void alloc_fail_arm(long n);
/* libvkds's allocations since the last arm. */
long alloc_fail_counted(void);
/* Whether the armed allocation has failed. */
bool alloc_fail_fired(void);
/* How many blocks libvkds has allocated and not freed. */
long alloc_fail_held(void);
#ifdef __cplusplus
}
#endif
#endif
