// Story 1 as an acceptance test: a camera whose film size, crop window, field of view and
// transform change every iteration compiles at most twice with literal generalization,
// gives bit-identical images to the specialized kernels, and, with generalization off,
// compiles once per iteration with a reason that names the literal that changed.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "film_camera.h"

#include <random>

using namespace kiln;

namespace {

struct LoopRun {
  std::vector<std::vector<float>> images;
  std::vector<KernelLaunch> compilations;
};

/// Runs 30 iterations with random cameras (the same ones for a given seed).
LoopRun run_loop(bool generalize, uint64_t seed = 7) {
  set_flag(Flag::Generalize, generalize);
  set_flag(Flag::DiskCache, false);
  flush_kernel_cache();
  kernel_history(true);
  std::mt19937_64 random(seed);
  LoopRun run;
  for (int iteration = 0; iteration < 30; ++iteration) {
    film::CameraSettings settings = film::random_settings(random);
    run.images.push_back(film::render_crop(settings).to_vector());
  }
  for (const KernelLaunch& launch : kernel_history(true))
    if (launch.source == KernelSource::Compiled || launch.source == KernelSource::Generalized)
      run.compilations.push_back(launch);
  set_flag(Flag::Generalize, true);
  set_flag(Flag::DiskCache, true);
  return run;
}

}  // namespace

TEST(StoryCamera, CompilesAtMostTwiceAndMatchesSpecializedKernelsBitForBit) {
  // A fresh process state for the shape: a seed whose cameras no other test uses.
  LoopRun generic = run_loop(true, 11);
  LoopRun specialized = run_loop(false, 11);
  ASSERT_EQ(generic.images.size(), 30u);
  EXPECT_LE(generic.compilations.size(), 2u);
  ASSERT_GE(generic.compilations.size(), 1u);
  EXPECT_EQ(generic.compilations.back().source, KernelSource::Generalized);
  EXPECT_GT(generic.compilations.back().parameters, 10u);
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(generic.images[i].size(), specialized.images[i].size()) << "iteration " << i;
    EXPECT_EQ(0, std::memcmp(generic.images[i].data(), specialized.images[i].data(),
                             generic.images[i].size() * sizeof(float)))
        << "iteration " << i << ": the generic kernel's image differs from the specialized one";
  }
}

TEST(StoryCamera, WithoutGeneralizationEveryIterationCompilesAndSaysWhy) {
  LoopRun run = run_loop(false, 12);
  ASSERT_EQ(run.compilations.size(), 30u);
  for (size_t i = 1; i < run.compilations.size(); ++i) {
    const std::string& reason = run.compilations[i].reason;
    EXPECT_NE(reason.find("label `"), std::string::npos) << reason;
    EXPECT_NE(reason.find(" changed "), std::string::npos) << reason;
    EXPECT_NE(reason.find("film_camera.h:"), std::string::npos) << reason;
    EXPECT_NE(reason.find("generalization is off"), std::string::npos) << reason;
  }
}

TEST(StoryCamera, TheGeneralizationReasonNamesTheChangedLiterals) {
  LoopRun run = run_loop(true, 13);
  ASSERT_EQ(run.compilations.size(), 2u);
  EXPECT_NE(run.compilations[0].reason.find("first time this kernel shape was seen"), std::string::npos)
      << run.compilations[0].reason;
  const std::string& reason = run.compilations[1].reason;
  EXPECT_NE(reason.find("label `"), std::string::npos) << reason;
  EXPECT_NE(reason.find("generalized"), std::string::npos) << reason;
  EXPECT_EQ(run.compilations[0].shape_hash, run.compilations[1].shape_hash);
  EXPECT_NE(run.compilations[0].hash, run.compilations[1].hash);
  // The listing shows which statements came from which labelled host value.
  std::string ir = run.compilations[1].ir();
  EXPECT_NE(ir.find("Param"), std::string::npos);
  EXPECT_NE(ir.find("label `crop_offset.x`"), std::string::npos) << ir;
}
