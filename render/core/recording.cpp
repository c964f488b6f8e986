// The thread's recording request and vertex recording (see recording.h).
#include "core/recording.h"

namespace kiln::render {
namespace {

thread_local RecordingRequest* innermost_request = nullptr;
thread_local VertexRecording* current_recording = nullptr;

}  // namespace

RecordingRequest::RecordingRequest(std::shared_ptr<PathRecorder> recorder, RecordingPass pass,
                                   const TensorXf* image_adjoint)
    : recorder_(std::move(recorder)), pass_(pass), image_adjoint_(image_adjoint), outer_(innermost_request) {
  innermost_request = this;
}

RecordingRequest::~RecordingRequest() { innermost_request = outer_; }

PathRecords& RecordingRequest::records() const {
  return pass_ == RecordingPass::Render ? recorder_->render_records() : recorder_->backward_records();
}

const RecordingRequest* recording_request() { return innermost_request; }

VertexRecordingScope::VertexRecordingScope(VertexRecording* recording) : outer_(current_recording) {
  current_recording = recording;
}

VertexRecordingScope::~VertexRecordingScope() { current_recording = outer_; }

VertexRecording* vertex_recording() { return current_recording; }

}  // namespace kiln::render
