// Video recording through an ffmpeg pipe (libx264), fed by a writer thread.
//
// The UI thread reads back a frame and hands it to push(); a writer thread drains a bounded queue
// into ffmpeg's stdin, so encoding never stalls the UI. Interactive recording drops a frame when
// the queue is full (and counts it); headless recording blocks instead so no frame is lost.
// Without ffmpeg (not on PATH, or CS_FFMPEG pointing nowhere) the writer says so once and writes
// numbered PNG frames into FILE_frames/ instead. SIGPIPE is ignored and every fwrite is checked,
// so an ffmpeg that exits early ends the recording with a message, not the app.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cs {

// Full path of the ffmpeg executable ($CS_FFMPEG, else the first on PATH), or "" when absent.
std::string findFfmpeg();

class VideoWriter {
public:
    ~VideoWriter();
    // Starts a recording of width x height frames at fps. Returns false with *message on
    // failure; on success *message says where frames go (the MP4, or the PNG fallback).
    bool open(const std::string& path, int width, int height, int fps, bool blockWhenFull,
              std::string* message);
    // Takes an RGB frame, bottom row first (glReadPixels order). False when dropped or closed.
    bool push(std::vector<uint8_t>&& rgbBottomUp);
    // Flushes the queue, closes the pipe and waits for ffmpeg; returns false if ffmpeg failed.
    bool close(std::string* message);

    bool isOpen() const { return open_; }
    bool usingFfmpeg() const { return pipe_ != nullptr; }
    const std::string& path() const { return path_; }
    int framesWritten() const { return written_; }
    int framesDropped() const { return dropped_; }
    int queueCapacity = 8;

private:
    void writerLoop();
    bool open_ = false;
    bool blockWhenFull_ = false;
    FILE* pipe_ = nullptr;
    std::string path_, frameDir_;
    int width_ = 0, height_ = 0;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::vector<uint8_t>> queue_;
    bool stop_ = false;
    bool failed_ = false;
    int written_ = 0, dropped_ = 0;
};

}  // namespace cs
