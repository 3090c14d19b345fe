// A shared object that is not a brisk plugin (no BRISK_PLUGIN entry point).
extern "C" int not_a_brisk_plugin() { return 42; }
