// replay_main.cc -- the main() of a fuzz target outside libFuzzer: runs LLVMFuzzerTestOneInput once
// over every file of the directories (or files) it is given, so that each target's corpus is a
// regression test in every build (plain, ASan+UBSan).
//
// Fails (exit 1) if an argument cannot be read or nothing at all was found to run: an empty corpus
// would make the test pass without testing anything. An input that breaks an invariant aborts, as
// it does under libFuzzer.
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool IsDirectory(const std::string& path) {
  struct stat status;
  return stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
}

// The regular files directly in `dir`, sorted so that runs are in the same order.
bool ListFiles(const std::string& dir, std::vector<std::string>* files) {
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) return false;
  std::vector<std::string> found;
  while (dirent* entry = readdir(handle)) {
    std::string path = dir + "/" + entry->d_name;
    struct stat status;
    if (entry->d_name[0] != '.' && stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode))
      found.push_back(path);
  }
  closedir(handle);
  std::sort(found.begin(), found.end());
  files->insert(files->end(), found.begin(), found.end());
  return true;
}

bool Replay(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  // As libFuzzer passes it: a heap copy of exactly its size (ASan sees a read past its end), never
  // a null pointer (not even for an empty input).
  std::unique_ptr<uint8_t[]> input(new uint8_t[bytes.size()]);
  std::copy(bytes.begin(), bytes.end(), input.get());
  LLVMFuzzerTestOneInput(input.get(), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!IsDirectory(arg)) {
      files.push_back(arg);
    } else if (!ListFiles(arg, &files)) {
      fprintf(stderr, "cannot read directory %s\n", arg.c_str());
      return 1;
    }
  }
  if (files.empty()) {
    fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...: no inputs found\n", argv[0]);
    return 1;
  }
  for (const std::string& file : files) {
    if (!Replay(file)) {
      fprintf(stderr, "cannot read %s\n", file.c_str());
      return 1;
    }
  }
  printf("replayed %zu inputs\n", files.size());
  return 0;
}
