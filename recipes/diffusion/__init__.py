"""``make diffusion``: Chapter 6b's masked diffusion model, trained from the course checkpoint."""
