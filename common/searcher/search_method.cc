// SearchContext, which records a method's decisions, and the factory of search methods.
#include "common/searcher/search_method.h"

#include "common/searcher/adaptive_asha_search.h"
#include "common/searcher/grid_search.h"
#include "common/searcher/random_search.h"
#include "common/searcher/single_search.h"
#include "common/searcher/time_asha_search.h"

namespace ring::search {

RequestId SearchContext::Create(nlohmann::json hparams, int64_t seed) {
  const RequestId id = trials_.Add();
  out_.push_back(CreateTrial{id, std::move(hparams), seed});
  return id;
}

void SearchContext::TrainTo(RequestId id, int64_t length) {
  TrialEntry* t = trials_.Find(id);
  if (!t || t->closed || trial_driven_) return;
  t->operation = length;
  t->target = length;
  out_.push_back(search::TrainTo{id, length});
}

void SearchContext::Close(RequestId id) {
  TrialEntry* t = trials_.Find(id);
  if (!t || t->closed) return;
  t->closed = true;
  t->operation.reset();
  out_.push_back(CloseTrial{id});
}

std::unique_ptr<SearchMethod> MakeSearchMethod(const SearcherConfig& config,
                                               const std::map<std::string, Hyperparameter>& space,
                                               uint64_t seed) {
  if (config.name == "grid") return std::make_unique<GridSearch>(config, space);
  if (config.name == "random") return std::make_unique<RandomSearch>(config, space);
  if (config.name == "adaptive_asha") {
    if (ContractOf(config) == SearcherContract::kTrialDriven)
      return std::make_unique<TimeAshaSearch>(config, space);
    return std::make_unique<AdaptiveAshaSearch>(config, space);
  }
  return std::make_unique<SingleSearch>(config, space, seed);
}

}  // namespace ring::search
