/* Test plugin: a valid shared object that exports no ergon symbol. */
__attribute__((visibility("default"))) int not_an_ergon_plugin(void);

int not_an_ergon_plugin(void)
{
	return 42;
}
