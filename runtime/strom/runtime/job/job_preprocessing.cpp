#include "strom/runtime/job/job_preprocessing.hpp"

#include <fmt/format.h>

#include "strom/compute/data/dataset_from_spec.hpp"

namespace strom::runtime {

result<job_preprocessing> job_preprocessing::of(const job_spec& job) {
  job_preprocessing preprocessing;
  const auto spec = job.reader().getData().getPreprocessing();
  preprocessing.scale_ = spec.getScale();
  if (spec.getStandardize() == schema::Standardize::NONE)
    return preprocessing;
  auto training = compute::load_data(job.reader().getData(), ".");
  if (!training)
    return error{fmt::format("{}: the job standardises its data with statistics of its training "
                             "set, which could not be read: {}",
                             job.source(), training.err().message)};
  preprocessing.statistics_ = std::move(training->statistics);
  return preprocessing;
}

void job_preprocessing::apply(compute::dataset& data) const {
  if (scale_ != 1.0f)
    compute::scale(data, scale_);
  if (!statistics_.mean.empty())
    compute::apply(data, statistics_);
}

} // namespace strom::runtime
