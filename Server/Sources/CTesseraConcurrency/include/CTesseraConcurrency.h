// Swift concurrency's global enqueue hook, reached by the linker instead of by name at run time.
//
// The runtime asks `swift_task_enqueueGlobal_hook` where a job with no executor of its own goes.
// Looking the variable up with `dlsym` (SwiftNIO's way) finds it only when the runtime is a
// shared library: a binary linked with the Swift libraries statically (scripts/build-release)
// keeps their symbols out of its dynamic table. A reference the linker resolves works both ways.
#ifndef C_TESSERA_CONCURRENCY_H
#define C_TESSERA_CONCURRENCY_H

#include <stdbool.h>

// Sets the hook to `hook` (a Swift function of the hook's type, as a pointer) if no hook is set;
// false if one already was. Call it before any task is made.
bool tessera_install_global_enqueue_hook(const void *hook);

#endif
