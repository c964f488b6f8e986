// How a PathRecorder given to render() reaches the path tracers: render() (and its
// derivatives) open a RecordingRequest; the sampling integrators' render loop turns it into
// a VertexRecording with each lane's pixel, sample and δL; path vertices append to it.
#pragma once

#include <kiln/render/records.h>
#include <kiln/tensor.h>

#include <memory>

namespace kiln::render {

/// Which records a request fills.
enum class RecordingPass { Render, Backward };

/// While alive, the renders on this thread record into `recorder` (`image_adjoint`: in
/// the backward pass, the adjoint of the image, which gives each sample's δL).
class RecordingRequest {
 public:
  RecordingRequest(std::shared_ptr<PathRecorder> recorder, RecordingPass pass, const TensorXf* image_adjoint = nullptr);
  ~RecordingRequest();
  RecordingRequest(const RecordingRequest&) = delete;
  RecordingRequest& operator=(const RecordingRequest&) = delete;

  PathRecords& records() const;
  RecordingPass pass() const { return pass_; }
  const TensorXf* image_adjoint() const { return image_adjoint_; }

 private:
  std::shared_ptr<PathRecorder> recorder_;
  RecordingPass pass_;
  const TensorXf* image_adjoint_;
  RecordingRequest* outer_;
};

/// The innermost request on this thread (nullptr: none).
const RecordingRequest* recording_request();

/// What path vertices append to during one render: the records, and per lane its pixel,
/// sample and δL (zero in the render pass).
struct VertexRecording {
  PathRecords* records;
  RecordingPass pass;
  UInt32 pixel, sample;
  Color3f ray_adjoint;
};

/// Makes `recording` the one vertex_recording() returns while alive.
class VertexRecordingScope {
 public:
  explicit VertexRecordingScope(VertexRecording* recording);
  ~VertexRecordingScope();
  VertexRecordingScope(const VertexRecordingScope&) = delete;
  VertexRecordingScope& operator=(const VertexRecordingScope&) = delete;

 private:
  VertexRecording* outer_;
};

/// The recording of the render under way (nullptr: none was asked for).
VertexRecording* vertex_recording();

}  // namespace kiln::render
