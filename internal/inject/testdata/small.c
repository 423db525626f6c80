/* small.c: the library hammer.c loads and unloads. */
int rpg_small_value;
int rpg_small(void) { return ++rpg_small_value; }
