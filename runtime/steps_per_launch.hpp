// runtime/ — the parts of ReadStepSignature that tell a single training step from a program of
// k steps per launch (steps_per_launch.cpp; docs/TRAINING.md, "Several steps per launch").
#pragma once

#include <string>
#include <vector>

#include "runtime/training.hpp"

namespace systole::runtime {

// From the metric outputs' shapes (signature.metric_outputs already read): all scalars is one
// step per launch; all [k] is k steps per launch, one value per step. Anything else is refused
// naming the output and its shape.
void ReadStepsPerLaunch(const hlo::Shape& root, const std::string& source, StepSignature& signature);

// The parameters that are not state, in order, and their common batch size: the first
// dimension of each, or for k steps per launch the second, the first being k. A parameter that
// does not fit is refused naming it and its shape.
// `root` names the metric that made the program k steps per launch in the errors.
void ReadBatchParameters(const std::vector<hlo::Instruction*>& parameters, const std::vector<bool>& is_state_parameter,
                         const hlo::Shape& root, const std::string& source, StepSignature& signature);

}  // namespace systole::runtime
