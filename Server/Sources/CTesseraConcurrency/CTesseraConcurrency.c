#include "CTesseraConcurrency.h"

#include <stddef.h>

// Defined by the Swift concurrency runtime (libswift_Concurrency), statically or dynamically linked.
extern const void *swift_task_enqueueGlobal_hook;

bool tessera_install_global_enqueue_hook(const void *hook) {
    const void *none = NULL;
    return __atomic_compare_exchange_n(&swift_task_enqueueGlobal_hook, &none, hook, false,
                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
