"""The example programs that the integration and two-hosts tests run as separate processes."""

# Every example program.
EXAMPLES = [
    "//examples/atomic-write:atomic-write",
    "//examples/connection:connection",
    "//examples/flush-to-persistent:flush-to-persistent-dram",
    "//examples/flush-to-persistent:flush-to-persistent-pmem",
    "//examples/messages-ping-pong:messages-ping-pong",
    "//examples/messages-ping-pong-shared-channel:messages-ping-pong-shared-channel",
    "//examples/messages-ping-pong-srq:messages-ping-pong-srq",
    "//examples/multiple-connections:multiple-connections",
    "//examples/read:read",
    "//examples/receive-completion-queue:receive-completion-queue",
    "//examples/receive-completion-queue-shared-channel:receive-completion-queue-shared-channel",
    "//examples/send-with-imm:send-with-imm",
    "//examples/write:write",
    "//examples/write-with-imm:write-with-imm",
]
