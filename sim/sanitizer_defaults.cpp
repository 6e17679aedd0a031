// Defaults for the ASan + UBSan build (preset `asan`), compiled into every executable that
// links the simulator. Empty in every other build.
#if defined(__SANITIZE_ADDRESS__)
extern "C" {
// handle_segv=0: worker-pool tests crash a worker on purpose and expect the signal, not
// ASan's report. detect_leaks=0: LeakSanitizer aborts with "fatal error" while scanning the
// SystemC coroutine stacks of larger runs (64 tiles and up); address and UB checks stay on.
const char* __asan_default_options() { return "handle_segv=0:detect_leaks=0"; }
}
#endif
