layout(local_size_x = 1) in;
void main() { int x = ; }
