#ifndef RCCL_TESTS_GIT_VERSION_H_
#define RCCL_TESTS_GIT_VERSION_H_

extern const char *rcclTestsGitHash;

#endif
