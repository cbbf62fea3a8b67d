// Loads a job file through the installed headers and libraries and takes one training step.
#include <cstdio>
#include <vector>

#include "strom/compute/replica_from_spec.hpp"
#include "strom/runtime/job/job_spec.hpp"

int main(int argc, char** argv) {
  if (argc != 2)
    return 2;
  auto job = strom::runtime::load_job_file(argv[1]);
  if (!job) {
    std::fprintf(stderr, "%s\n", job.err().message.c_str());
    return 1;
  }
  auto built = strom::compute::make_replica(job->reader(), 0);
  if (!built) {
    std::fprintf(stderr, "%s\n", built.err().message.c_str());
    return 1;
  }
  auto& trainer = **built;
  const auto width = trainer.net().input_shape().size();
  std::vector<float> features(2 * width, 0.5f);
  std::vector<std::int32_t> labels{1, 2};
  const float loss = trainer.train_step(features, labels, 2);
  std::printf("parameters %zu loss %.4f\n", trainer.net().parameters().size(), loss);
  return loss > 0.0f ? 0 : 1;
}
