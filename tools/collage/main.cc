#include <cstdio>
int main() { std::puts("collage"); return 0; }
