// LeakSanitizer's built-in suppressions for every binary that links brisk's core
// (--config=asan, the libFuzzer targets): leaks inside libtorch itself, not brisk's code.
// LSan calls this hook at start-up when it is linked in; other builds never call it.
//
// PyTorchStreamReader's constructor throws on a damaged zip after miniz allocated its
// state, and its destructor never runs: every reader of a bad archive leaks that state,
// torch's own jit::load included.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:mz_zip_reader_init\n"
         "leak:mz_zip_reader_read_central_dir\n";
}
