"""A few steps of the real Hugging Face Trainer on CPU: a 2-layer GPT-2 built from a config with
random weights (no Hub download), an in-memory dataset, logging_steps=1. What the Trainer prints
goes wherever stdout/stderr go (scripts/frameworks.sh sends both to hf_trainer.log, as a job
script's `> log 2>&1` does); its own record of the run is written as trainer_state.json."""

import os
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    """Runs of consecutive token ids from random starts: learnable, so the loss falls within a
    few steps and every logged loss differs from the last."""

    def __init__(self, n, length, vocab):
        g = torch.Generator().manual_seed(0)
        starts = torch.randint(0, vocab, (n, 1), generator=g)
        self.ids = (starts + torch.arange(length)) % vocab

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def main():
    out = sys.argv[1]
    steps = int(os.environ.get("HF_STEPS", "16"))
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=128, n_positions=32, n_embd=32, n_layer=2, n_head=2)
    model = GPT2LMHeadModel(cfg)
    args = TrainingArguments(
        output_dir=os.path.join(out, "hf_output"),
        max_steps=steps,
        per_device_train_batch_size=4,
        learning_rate=5e-3,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        dataloader_num_workers=0,
        seed=0,
    )
    trainer = Trainer(model=model, args=args, train_dataset=Tokens(64, 32, cfg.vocab_size))
    trainer.train()
    trainer.state.save_to_json(os.path.join(out, "trainer_state.json"))


if __name__ == "__main__":
    main()
