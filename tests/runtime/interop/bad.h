struct dup { int a; };
struct dup { int b; };
