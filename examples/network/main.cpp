// run_network NET.inp [DURATION]: the network over DURATION (the file's without it), then the
// heads of its first three nodes and the levels of its tanks at every reporting time.
#include <cgsolve/network.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: run_network NET.inp [DURATION]\n");
    return 2;
  }
  namespace net = cgsolve::network;
  try {
    const net::Network network = net::Network::from_file(argv[1]);
    net::Options options;
    if (argc > 2) options.duration = argv[2];
    const net::Results r = net::run(network, options);
    const std::size_t nodes = r.node_ids.size(), tanks = r.tank_ids.size();
    for (std::size_t t = 0; t < r.times.size(); ++t) {
      std::printf("%6ld s", r.times[t]);
      for (std::size_t i = 0; i < nodes && i < 3; ++i)
        std::printf("  head %s %.3f", r.node_ids[i].c_str(), r.head[t * nodes + i]);
      for (std::size_t k = 0; k < tanks; ++k)
        std::printf("  level %s %.3f", r.tank_ids[k].c_str(), r.level[t * tanks + k]);
      std::printf("\n");
    }
    std::printf("%s\n", r.completed ? "completed" : r.error.c_str());
    return r.completed ? 0 : 1;
  } catch (const cgsolve::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
