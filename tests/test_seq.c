/* tests/test_seq.c (being written) */
int main(void) { return 0; }
