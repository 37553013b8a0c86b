# Train configs for fine-tuning pi0 / pi0.5 on a `memobench data export --format openpi` dataset.
#
# Text to paste into an openpi checkout, not a module of MEMOBench (nothing here imports it). Written
# against openpi at commit 15a9616a00943ada6c20a0f158e3adb39df2ccac (its pyproject pins LeRobot at
# 0cf864870cf29f4738d3ade893e6fd13fbd7cdb5, which reads LeRobot format v2.1), from reading its
# src/openpi/training/config.py; not run here (no GPU, no openpi environment). Add the entries to the
# `_CONFIGS` list in src/openpi/training/config.py, where TrainConfig, DataConfig,
# LeRobotLiberoDataConfig, pi0_config, weight_loaders and _optimizer are already imported.
#
# The data config: the export has exactly the keys openpi's LIBERO data config repacks (image,
# wrist_image, state, actions, and the prompt from the row's task), so LeRobotLiberoDataConfig is
# the data config; only repo_id changes. MEMOBench's actions are OSC_POSE deltas like LIBERO's, so
# no extra delta transform. The dataset must lie at $HF_LEROBOT_HOME/<repo_id> (LeRobot's local root).
# Its norm_stats.json goes to assets/<config name>/<repo_id>/norm_stats.json (openpi's assets_dirs
# / asset_id, asset_id defaulting to repo_id), or run openpi's scripts/compute_norm_stats.py.

    TrainConfig(
        name="pi0_memobench",
        # pi0 cuts prompts at 48 tokens. With --prompt oracle-* exports, check the export's token
        # report (meta/memobench_prompts.json) and raise the limit over its longest prompt, e.g.
        # pi0_config.Pi0Config(max_token_len=96) (a longer prompt costs memory; not tried here).
        model=pi0_config.Pi0Config(),
        data=LeRobotLiberoDataConfig(
            repo_id="memobench/demos",
            base_config=DataConfig(prompt_from_task=True),
            extra_delta_transform=False,
        ),
        weight_loader=weight_loaders.CheckpointWeightLoader("gs://openpi-assets/checkpoints/pi0_base/params"),
        num_train_steps=30_000,
    ),
    TrainConfig(
        name="pi05_memobench",
        # pi0.5 has 200 tokens, shared with its discretised state; as pi05_libero otherwise.
        model=pi0_config.Pi0Config(pi05=True, action_horizon=10, discrete_state_input=False),
        data=LeRobotLiberoDataConfig(
            repo_id="memobench/demos",
            base_config=DataConfig(prompt_from_task=True),
            extra_delta_transform=False,
        ),
        batch_size=256,
        lr_schedule=_optimizer.CosineDecaySchedule(
            warmup_steps=10_000, peak_lr=5e-5, decay_steps=1_000_000, decay_lr=5e-5
        ),
        optimizer=_optimizer.AdamW(clip_gradient_norm=1.0),
        ema_decay=0.999,
        weight_loader=weight_loaders.CheckpointWeightLoader("gs://openpi-assets/checkpoints/pi05_base/params"),
        num_train_steps=30_000,
    ),
