"""The reference policies: one network, three memories.

Every policy reads a sequence of frames (one every ``stride`` control steps): the ``state``
vector (:mod:`memobench.data.state_features`) or, in ``rgb`` mode, the robot state and both
cameras' images (each camera through the same small CNN, :class:`ImageEncoder`; the two features
side by side) and the embedding of the prompt it was given at that frame. No clock: the frame's time
in the episode is not an input, since a step counter would be memory the memoryless ``bc-mlp`` has
(demos of one speed let it replay a plan by the clock), and a slower policy's clock would mislead it.
The state is standardised per dimension with the training demos' mean and deviation
(:meth:`MemoryPolicy.set_normalisation`; buffers saved with the weights, so evaluation applies
the same): raw poses differ by centimetres beside angles near pi and a 384-d text vector, and the
encoder's LayerNorm alone would drown those differences. A shared encoder turns each frame into a
feature ``f_t``; the
memory turns the features up to ``t`` into the memory vector ``m_t``; a head maps
``m_t`` (and ``f_t``) to a chunk of ``chunk`` x 7 actions.

- ``bc-mlp``: no memory, ``m_t = f_t`` (the current frame only; it does not see the cue).
- ``bc-gru``: a GRU over all frames so far, started from the cue's encoding; ``m_t`` is its state.
- ``bc-transformer``: causal self-attention over the last ``window`` frames and a cue token;
  ``m_t`` is the output at ``t``. Order comes from a learned bias on the attention logits per
  distance (0 .. window-1 frames back), not from frame indices: absolute positions would be the
  clock ruled out above, and a 1,200-step episode would reach positions no demo has.

With ``memory_input`` "scene" the memory reads each frame through its own encoder with the robot's
state blanked, while the head still reads ``f_t``: a history of proprioception tells a network the
previous action, and cloning it (copycat) is the known failure of history-conditioned cloning.

Two linear heads project ``m_t`` and ``f_t`` into the text embedding's space for the
alignment losses (:mod:`memobench.training.losses`). :meth:`MemoryPolicy.forward` runs whole
sequences (training); :class:`Rollout` feeds one frame at a time and gives the same outputs
(evaluation; a test checks the two agree).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

from memobench.data.state_features import ROBOT_DIM

POLICIES = ("bc-mlp", "bc-gru", "bc-transformer")
ACTION_DIM = 7
CUE_DIM = ROBOT_DIM  # the cue is a sequence of robot states (what the harness shows a policy camera-free)
AXIS_ANGLE = slice(3, 6)  # the end effector's orientation in a robot state (memobench.sim.env.SimEnv.robot_state)
ROTATION_FEATURES = 9  # its rotation matrix, added to every frame's observation
ROBOT_FEATURES = ROBOT_DIM + ROTATION_FEATURES  # what an observation holds of the robot, first
CAMERAS = 2  # rgb mode: agent view and wrist, in that order
MEMORY_INPUTS = ("all", "scene")


@dataclass(frozen=True)
class PolicyConfig:
    """Everything that fixes a network's shape (saved with every checkpoint)."""

    kind: str
    state_dim: int
    text_dim: int
    hidden: int = 128
    chunk: int = 50
    window: int = 16
    layers: int = 2
    heads: int = 4
    image_size: int = 0  # rgb mode: the frames' side in pixels; 0 in state mode (no images)
    image_features: int = 64  # per camera
    memory_input: str = "all"  # what the memory reads of each frame: "all", or "scene" (not the robot's state)

    @property
    def rgb(self) -> bool:
        return self.image_size > 0

    @property
    def frame_dim(self) -> int:
        """Width of one frame's observation: the state vector and the rotation matrix, plus both cameras'
        CNN features in rgb mode."""
        return self.state_dim + ROTATION_FEATURES + (CAMERAS * self.image_features if self.rgb else 0)

    def __post_init__(self) -> None:
        if self.kind not in POLICIES:
            raise ValueError(f"unknown policy {self.kind!r}; known: {', '.join(POLICIES)}")
        if self.memory_input not in MEMORY_INPUTS:
            raise ValueError(f"memory input must be one of {', '.join(MEMORY_INPUTS)}, not {self.memory_input!r}")

    def to_dict(self) -> dict:
        return asdict(self)


def rotation_matrix(axis_angle: torch.Tensor) -> torch.Tensor:
    """The rotation matrices [..., 9] (row-major) of axis-angle vectors [..., 3] (Rodrigues' formula;
    any angle, zero giving the identity)."""
    angle = axis_angle.norm(dim=-1, keepdim=True)
    k = axis_angle / angle.clamp_min(1e-8)
    x, y, z = k.unbind(-1)
    zero = torch.zeros_like(x)
    cross = torch.stack([zero, -z, y, z, zero, -x, -y, x, zero], dim=-1).unflatten(-1, (3, 3))
    eye = torch.eye(3, dtype=axis_angle.dtype, device=axis_angle.device)
    rotation = eye + angle.sin()[..., None] * cross + (1 - angle.cos())[..., None] * (cross @ cross)
    return rotation.flatten(-2)


class ImageEncoder(nn.Module):
    """A small CNN: uint8 frames [..., H, W, 3] to features [..., out]; any H, W of at least 16.

    Three stride-2 convolutions, then a 4 x 4 average-pooled map flattened (where things are
    in the image matters for manipulation, so the map is not pooled to one cell).
    """

    def __init__(self, out: int) -> None:
        super().__init__()
        self.out = out
        self.net = nn.Sequential(
            nn.Conv2d(3, 16, 5, stride=2, padding=2),
            nn.GELU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv2d(32, 32, 3, stride=2, padding=1),
            nn.GELU(),
            nn.AdaptiveAvgPool2d(4),
            nn.Flatten(),
            nn.Linear(32 * 16, out),
            nn.GELU(),
        )

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        lead = frames.shape[:-3]
        x = frames.reshape(-1, *frames.shape[-3:]).permute(0, 3, 1, 2).float() / 255.0 - 0.5
        return self.net(x).reshape(*lead, self.out)


class CueEncoder(nn.Module):
    """A GRU over the cue's frames (robot states, plus image features in rgb mode); an empty cue encodes to zeros."""

    def __init__(self, hidden: int, inputs: int) -> None:
        super().__init__()
        self.gru = nn.GRU(inputs, hidden, batch_first=True)

    def forward(self, cue: torch.Tensor, cue_lengths: torch.Tensor) -> torch.Tensor:
        batch = cue.shape[0]
        out = torch.zeros(batch, self.gru.hidden_size, dtype=cue.dtype, device=cue.device)
        nonempty = cue_lengths > 0
        if nonempty.any():
            packed = nn.utils.rnn.pack_padded_sequence(
                cue[nonempty], cue_lengths[nonempty].cpu(), batch_first=True, enforce_sorted=False
            )
            _, last = self.gru(packed)
            out = out.masked_scatter(nonempty[:, None], last[0])
        return out


class AttentionBlock(nn.Module):
    """Pre-norm self-attention then feed-forward, each added to its input, under an additive float mask.

    Written out rather than nn.TransformerEncoderLayer: that layer's inference fast path (eval mode
    without gradients, which is how Rollout runs) treats a float mask with finite non-zero entries
    differently from its training path, and the transformer's mask carries the distance bias."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.attention_norm, self.feedforward_norm = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.attention_out = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.feedforward = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``x`` [B, T, width], ``mask`` [T, T] added to the attention logits (query row, key column)."""
        q, k, v = self.qkv(self.attention_norm(x)).unflatten(-1, (3, self.heads, -1)).permute(2, 0, 3, 1, 4)
        attended = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.attention_out(attended.transpose(1, 2).flatten(-2))
        return x + self.feedforward(self.feedforward_norm(x))


class CausalWindowTransformer(nn.Module):
    """``layers`` :class:`AttentionBlock` s over a context token (token 0, the cue) and frames: frame t
    attends to the context token and to frames t-d for d = 0 .. window-1, with a learned bias per
    distance d on the attention logits (the only source of order); the context token sees itself."""

    def __init__(self, width: int, heads: int, layers: int, window: int) -> None:
        super().__init__()
        self.window = window
        self.blocks = nn.ModuleList(AttentionBlock(width, heads) for _ in range(layers))
        # a mild preference for recent frames, so that order is visible from the first step (all zeros
        # would make attention blind to it)
        self.distance_bias = nn.Parameter(-torch.arange(window, dtype=torch.float32) / window)

    def mask(self, frames: int, device) -> torch.Tensor:
        """The [1 + frames, 1 + frames] additive mask described above (-inf where not attended)."""
        i = torch.arange(frames, device=device)
        distance = i[:, None] - i[None, :]
        allowed = (distance >= 0) & (distance < self.window)
        mask = torch.full((frames + 1, frames + 1), float("-inf"), device=device)
        mask[:, 0] = 0.0
        mask[1:, 1:] = torch.where(allowed, self.distance_bias[distance.clamp(0, self.window - 1)], mask[1:, 1:])
        return mask

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens`` [B, 1 + T, width]: the context token, then T frames in order."""
        mask = self.mask(tokens.shape[1] - 1, tokens.device)
        for block in self.blocks:
            tokens = block(tokens, mask)
        return tokens


def frame_encoder(inputs: int, hidden: int) -> nn.Module:
    """One frame's observation and prompt vector to a feature of width ``hidden``."""
    return nn.Sequential(
        nn.LayerNorm(inputs), nn.Linear(inputs, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU()
    )


class MemoryPolicy(nn.Module):
    """The network of :class:`PolicyConfig` ``kind`` (see the module docstring)."""

    def __init__(self, config: PolicyConfig) -> None:
        super().__init__()
        self.config = config
        h = config.hidden
        if config.rgb:
            self.images = ImageEncoder(config.image_features)
        self.encoder = frame_encoder(config.frame_dim + config.text_dim, h)
        scene_memory = config.kind != "bc-mlp" and config.memory_input == "scene"
        self.scene_encoder = frame_encoder(config.frame_dim + config.text_dim, h) if scene_memory else None
        if config.kind != "bc-mlp":
            self.cue = CueEncoder(h, ROBOT_FEATURES + (CAMERAS * config.image_features if config.rgb else 0))
        if config.kind == "bc-gru":
            self.memory = nn.GRU(h, h, batch_first=True)
        elif config.kind == "bc-transformer":
            self.memory = CausalWindowTransformer(h, config.heads, config.layers, config.window)
        head_in = h if config.kind == "bc-mlp" else 2 * h
        self.head = nn.Sequential(nn.Linear(head_in, h), nn.GELU(), nn.Linear(h, config.chunk * ACTION_DIM))
        self.memory_proj = nn.Linear(h, config.text_dim)
        self.frame_proj = nn.Linear(h, config.text_dim)
        # the identity until training sets the demos' statistics (module docstring)
        self.register_buffer("state_mean", torch.zeros(config.state_dim))
        self.register_buffer("state_std", torch.ones(config.state_dim))

    def set_normalisation(self, mean: torch.Tensor, std: torch.Tensor) -> None:
        """Standardise states with per-dimension ``mean`` and ``std`` [state_dim] (std > 0)."""
        if mean.shape != self.state_mean.shape or std.shape != self.state_std.shape or not bool((std > 0).all()):
            raise ValueError(f"normalisation needs mean and positive std of shape {tuple(self.state_mean.shape)}")
        self.state_mean.copy_(mean)
        self.state_std.copy_(std)

    def normalise(self, states: torch.Tensor) -> torch.Tensor:
        """``states`` [..., D] standardised by the first D dimensions' statistics (the cue's robot
        states are the state vector's first ``CUE_DIM`` entries in both modes)."""
        width = states.shape[-1]
        return (states.float() - self.state_mean[:width]) / self.state_std[:width]

    def observations(self, states: torch.Tensor, images: torch.Tensor | None) -> torch.Tensor:
        """States [B, T, S] as [robot state standardised, its rotation matrix, the rest standardised], with
        rgb mode's images [B, T, 2, H, W, 3] (uint8) as CNN features appended. The robot's part is the
        first ``ROBOT_FEATURES`` entries."""
        standardised = self.normalise(states)
        parts = [
            standardised[..., :ROBOT_DIM],
            rotation_matrix(states[..., AXIS_ANGLE].float()),
            standardised[..., ROBOT_DIM:],
        ]
        if self.config.rgb:
            if images is None:
                raise ValueError("this is an rgb network: it needs both cameras' images")
            parts.append(self.images(images).flatten(-2))
        return torch.cat(parts, dim=-1)

    def features(
        self, states: torch.Tensor, prompts: torch.Tensor, images: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-frame features [B, T, h] from states [B, T, S] and prompt vectors [B, T, E] (and, in rgb
        mode, images [B, T, 2, H, W, 3]): ``f_t``, which the head reads, and what the memory reads:
        ``f_t`` itself, or with ``memory_input`` "scene" the frame through its own encoder with the
        robot's state blanked (its standardised value 0). The observations are computed once for both."""
        observed = self.observations(states, images)
        f = self.encoder(torch.cat([observed, prompts], dim=-1))
        if self.scene_encoder is None:
            return f, f
        robot, scene = observed[..., :ROBOT_FEATURES], observed[..., ROBOT_FEATURES:]
        blanked = torch.cat([torch.zeros_like(robot), scene], dim=-1)
        return f, self.scene_encoder(torch.cat([blanked, prompts], dim=-1))

    def encode_cue(self, cue: torch.Tensor, cue_lengths: torch.Tensor, cue_images: torch.Tensor | None = None):
        """The cue's encoding [B, h] from its robot states [B, C, 8] (and images [B, C, 2, H, W, 3] in rgb mode)."""
        return self.cue(self.observations(cue, cue_images), cue_lengths)

    def forward(
        self,
        states: torch.Tensor,
        prompts: torch.Tensor,
        cue: torch.Tensor,
        cue_lengths: torch.Tensor,
        images: torch.Tensor | None = None,
        cue_images: torch.Tensor | None = None,
    ) -> dict[str, torch.Tensor]:
        """Whole sequences: ``actions`` [B, T, chunk, 7], ``memory`` (m_t) and ``frames`` (f_t) [B, T, h],
        and their projections ``memory_text`` / ``frame_text`` [B, T, E]. Frame t depends on frames <= t only.
        rgb mode also takes ``images`` [B, T, 2, H, W, 3] and ``cue_images`` [B, C, 2, H, W, 3] (uint8)."""
        f, g = self.features(states, prompts, images)
        kind = self.config.kind
        if kind == "bc-mlp":
            m = f
            head_in = f
        else:
            c = self.encode_cue(cue, cue_lengths, cue_images)
            if kind == "bc-gru":
                m, _ = self.memory(g, torch.tanh(c)[None].contiguous())
            else:
                tokens = torch.cat([c[:, None], g], dim=1)
                m = self.memory(tokens)[:, 1:]
            head_in = torch.cat([f, m], dim=-1)
        actions = self.head(head_in).unflatten(-1, (self.config.chunk, ACTION_DIM))
        return {
            "actions": actions,
            "memory": m,
            "frames": f,
            "memory_text": self.memory_proj(m),
            "frame_text": self.frame_proj(f),
        }


class Rollout:
    """One episode, one frame at a time: the same outputs as :meth:`MemoryPolicy.forward` on the whole sequence."""

    def __init__(self, net: MemoryPolicy, cue: torch.Tensor, cue_images: torch.Tensor | None = None) -> None:
        """``cue`` [C, 8]: the cue's robot states (C may be 0); in rgb mode ``cue_images`` [C, 2, H, W, 3]."""
        self.net = net
        self.frames: list[torch.Tensor] = []  # the transformer's recent features
        with torch.no_grad():
            self.cue = (
                net.encode_cue(
                    cue[None].float(), torch.tensor([len(cue)]), None if cue_images is None else cue_images[None]
                )
                if net.config.kind != "bc-mlp"
                else torch.zeros(1)
            )
        self.hidden = torch.tanh(self.cue)[None] if net.config.kind == "bc-gru" else None

    @torch.no_grad()
    def step(
        self, state: torch.Tensor, prompt: torch.Tensor, images: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        """Outputs for the next frame (``state`` [S], ``prompt`` [E], rgb mode's ``images`` [2, H, W, 3]);
        tensors without batch and time dims."""
        net, kind = self.net, self.net.config.kind
        inputs = (state[None, None].float(), prompt[None, None].float(), None if images is None else images[None, None])
        f, g = net.features(*inputs)
        if kind == "bc-mlp":
            m, head_in = f, f
        elif kind == "bc-gru":
            m, self.hidden = net.memory(g, self.hidden)
            head_in = torch.cat([f, m], dim=-1)
        else:
            # Layer l of frame t reaches back l * (window - 1) frames: keep exactly that many, masked as in training.
            reach = net.config.layers * (net.config.window - 1) + 1
            self.frames = [*self.frames, g][-reach:]
            tokens = torch.cat([self.cue[:, None], *self.frames], dim=1)
            m = net.memory(tokens)[:, -1:]
            head_in = torch.cat([f, m], dim=-1)
        actions = net.head(head_in).unflatten(-1, (net.config.chunk, ACTION_DIM))
        return {"actions": actions[0, 0], "memory": m[0, 0]}
