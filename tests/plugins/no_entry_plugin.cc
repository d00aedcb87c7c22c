// A shared library without the plug-in entry points: loading it as a plug-in must fail with
// a message saying what is missing.
extern "C" __attribute__((visibility("default"))) int some_other_function() { return 42; }
