// ffmpeg pipe with a writer thread and a PNG fallback; see video_writer.h.
#include "render/video_writer.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <unistd.h>

#include "render/gl_context.h"

namespace cs {

std::string findFfmpeg() {
    if (const char* env = std::getenv("CS_FFMPEG")) return access(env, X_OK) == 0 ? std::string(env) : "";
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        std::string candidate = (dir.empty() ? "." : dir) + "/ffmpeg";
        if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return "";
}

VideoWriter::~VideoWriter() { close(nullptr); }

bool VideoWriter::open(const std::string& path, int width, int height, int fps, bool blockWhenFull,
                       std::string* message) {
    close(nullptr);
    path_ = path;
    width_ = width;
    height_ = height;
    blockWhenFull_ = blockWhenFull;
    written_ = dropped_ = 0;
    stop_ = failed_ = false;
    std::signal(SIGPIPE, SIG_IGN);
    std::string ffmpeg = findFfmpeg();
    if (!ffmpeg.empty()) {
        // Raw RGB frames on stdin, bottom-up (vflip), H.264 in yuv420p so every player reads it.
        std::ostringstream cmd;
        cmd << "'" << ffmpeg << "' -y -loglevel error -nostats -f rawvideo -pix_fmt rgb24 -s " << width << "x"
            << height << " -r " << fps << " -i - -vf vflip -c:v libx264 -preset veryfast -crf 20"
            << " -pix_fmt yuv420p '" << path << "'";
        pipe_ = popen(cmd.str().c_str(), "w");
        if (!pipe_) {
            if (message) *message = "cannot start ffmpeg (" + ffmpeg + ")";
            return false;
        }
        if (message) *message = "recording " + path + " through ffmpeg (libx264)";
    } else {
        std::filesystem::path p(path);
        frameDir_ = (p.parent_path() / (p.stem().string() + "_frames")).string();
        std::error_code ec;
        std::filesystem::create_directories(frameDir_, ec);
        if (ec) {
            if (message) *message = "ffmpeg not found, and cannot create " + frameDir_;
            return false;
        }
        if (message) *message = "ffmpeg not found: writing PNG frames to " + frameDir_ + "/ instead of " + path;
    }
    open_ = true;
    thread_ = std::thread(&VideoWriter::writerLoop, this);
    return true;
}

bool VideoWriter::push(std::vector<uint8_t>&& frame) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!open_ || failed_) return false;
    if ((int)queue_.size() >= queueCapacity) {
        if (!blockWhenFull_) {
            ++dropped_;
            return false;
        }
        cv_.wait(lock, [&] { return (int)queue_.size() < queueCapacity || failed_; });
        if (failed_) return false;
    }
    queue_.push_back(std::move(frame));
    cv_.notify_all();
    return true;
}

void VideoWriter::writerLoop() {
    int index = 0;
    for (;;) {
        std::vector<uint8_t> frame;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            cv_.wait(lock, [&] { return !queue_.empty() || stop_; });
            if (queue_.empty()) return;
            frame = std::move(queue_.front());
            queue_.pop_front();
            cv_.notify_all();
        }
        bool ok;
        if (pipe_) {
            ok = fwrite(frame.data(), 1, frame.size(), pipe_) == frame.size();
        } else {
            char name[64];
            std::snprintf(name, sizeof name, "/frame_%05d.png", index);
            ok = writePng(frameDir_ + name, width_, height_, frame, nullptr);
        }
        ++index;
        std::lock_guard<std::mutex> lock(mutex_);
        if (ok) ++written_;
        else {
            failed_ = true;
            queue_.clear();
            cv_.notify_all();
        }
    }
}

bool VideoWriter::close(std::string* message) {
    if (!open_) return true;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
    bool ok = !failed_;
    if (pipe_) {
        int status = pclose(pipe_);
        pipe_ = nullptr;
        ok = ok && status == 0;
    }
    open_ = false;
    if (message) {
        std::ostringstream m;
        if (!ok) m << "recording failed after " << written_ << " frames (ffmpeg exited early?)";
        else if (!frameDir_.empty()) m << "wrote " << written_ << " PNG frames to " << frameDir_ << "/";
        else m << "wrote " << path_ << " (" << written_ << " frames)";
        if (dropped_ > 0) m << ", " << dropped_ << " frames dropped to keep the UI responsive";
        *message = m.str();
    }
    frameDir_.clear();
    return ok;
}

}  // namespace cs
